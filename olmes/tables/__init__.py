"""Stage 4, score summaries -> the paper's tables (``paper``) with their inputs (``results``),
rendering, bootstrap, figure data and the robustness tables."""
