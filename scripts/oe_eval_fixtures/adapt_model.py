"""Copy the transformers-5.x-written SmolLM2-135M-Instruct folder and adapt the
copy's config files so transformers 4.57 loads it. Weights are untouched.

Usage: python adapt_model.py SRC_DIR DST_DIR
Changes (copy only):
  config.json:            rope_parameters.rope_theta -> rope_theta (rope_type default -> no rope_scaling),
                          dtype -> torch_dtype
  tokenizer_config.json:  tokenizer_class TokenizersBackend (5.x only) -> GPT2TokenizerFast,
                          drop 5.x-only keys (backend, is_local, local_files_only),
                          model_max_length 1e30 -> 8192 (as in upstream SmolLM2 repo)
"""

import json
import shutil
import sys
from pathlib import Path

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
for f in src.iterdir():
    if not (dst / f.name).exists():
        shutil.copy2(f, dst / f.name)

cfg_path = dst / "config.json"
cfg = json.loads((src / "config.json").read_text())
rp = cfg.pop("rope_parameters", None)
if rp is not None:
    cfg["rope_theta"] = rp["rope_theta"]
    assert rp.get("rope_type", "default") == "default", rp
if "dtype" in cfg:
    cfg["torch_dtype"] = cfg.pop("dtype")
cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")

tok_path = dst / "tokenizer_config.json"
tok = json.loads((src / "tokenizer_config.json").read_text())
for k in ("backend", "is_local", "local_files_only"):
    tok.pop(k, None)
if tok.get("tokenizer_class") == "TokenizersBackend":
    tok["tokenizer_class"] = "GPT2TokenizerFast"
tok["model_max_length"] = 8192
tok_path.write_text(json.dumps(tok, indent=2) + "\n")
print("adapted", dst)
