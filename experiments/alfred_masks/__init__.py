"""The closed-loop mask study: own-state mask labels, mask-decoder fits and finer mask heads."""
