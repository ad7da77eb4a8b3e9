"""Selecting: optimize for RL and SFT, group hygiene, pairs, the publish gate, lineage."""
