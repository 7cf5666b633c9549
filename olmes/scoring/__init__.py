"""Stage 3, log-probs -> predictions and score summaries (``score``), their flags, and the
every-answer-order report (``rotations``)."""
