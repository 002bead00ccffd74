"""Domain-free helpers shared by every layer (simulator, backends, task packages, configs).

Owns nothing about AI2-THOR, rearrangement or ALFRED; depends only on the standard library.
"""
