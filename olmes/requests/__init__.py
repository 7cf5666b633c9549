"""Stage 1, dataset -> standardized instances -> requests: the task registry (``tasks``),
the prompt rules (``prompts``), the datasets (``data``) and the request files (``build``)."""
