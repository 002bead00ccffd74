"""ALFRED's Seq2Seq(+PM) baseline (`seq2seq`), its losses (`losses`) and AllenAct wrapper (`actor_critic`)."""
