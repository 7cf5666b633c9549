"""Shared by every stage: errors, atomic writes, the records of the file formats, the
scoring-method registry, offline resources, the workflow config's validation."""
