"""The Seq2Seq(+PM) studies on thor_lite: learning, memorisation, ablations, language use."""
