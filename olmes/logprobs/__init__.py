"""Stage 2, requests -> log-probs: model specs (``models``), the engine, its cache and the
runner that turns a request file into a log-prob Parquet and its run record."""
