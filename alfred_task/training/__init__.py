"""Training entry points and artefacts: encoder pre-training, IL storage, checkpoint conversion and shipping.

A top stage beside evaluation; it imports models and data, never the reverse.
"""
