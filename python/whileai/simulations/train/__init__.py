"""Training-side helpers: logprob reports, reference scoring (and trainer hooks)."""
