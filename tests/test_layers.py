"""The layer contract (pyproject.toml, [tool.importlinter]) holds, and breaks on an upward import."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports on the ``olmes`` package found first in ``root`` (the contract of root's pyproject)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def test_every_stage_imports_only_the_stages_below_it():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


def lint_with(tmp_path: Path, added: dict[str, str]) -> subprocess.CompletedProcess:
    """lint-imports on a copy of the package with ``added[module]`` (an import line) appended to each
    module (a path below olmes/)."""
    shutil.copytree(REPO / "olmes", tmp_path / "olmes", ignore=shutil.ignore_patterns("static", "fonts"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    for module, line in added.items():
        path = tmp_path / "olmes" / module
        path.write_text(path.read_text() + f"\n{line}  # noqa: E402,F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout
    return result


def test_an_upward_import_breaks_the_contract(tmp_path):
    result = lint_with(tmp_path, {"core/errors.py": "from olmes.scoring import score"})
    assert "olmes.core is not allowed to import olmes.scoring" in result.stdout
    assert "olmes.core.errors -> olmes.scoring" in result.stdout


def test_the_site_reading_a_prompt_template_breaks_the_contract(tmp_path):
    """Tables, scoring and the site take the tasks' facts from core, never from the templates."""
    result = lint_with(tmp_path, {"site/charts.py": "from olmes.requests.tasks import TEMPLATES"})
    assert "olmes.site is not allowed to import olmes.requests" in result.stdout
    assert "Contracts: 2 kept, 1 broken." in result.stdout


def test_peers_importing_each_other_break_the_contract(tmp_path):
    """The store and the site, and scoring, log-probs and requests, are peers: neither imports the other."""
    result = lint_with(
        tmp_path,
        {"store/layout.py": "import olmes.site.svg", "scoring/flags.py": "import olmes.logprobs.spec"},
    )
    assert "olmes.store is not allowed to import olmes.site" in result.stdout
    assert "olmes.scoring is not allowed to import olmes.logprobs" in result.stdout


def test_the_workflow_module_importing_torch_breaks_the_contract(tmp_path):
    """The workflow sizes its jobs with olmes.logprobs.placement: the models module there reaches torch."""
    result = lint_with(tmp_path, {"logprobs/placement.py": "from olmes.logprobs import models"})
    assert "olmes.cli.workflow is not allowed to import torch" in result.stdout


def test_the_workflow_reaches_olmes_only_through_its_module():
    """The Snakefile and the rules import olmes.cli.workflow and nothing else of olmes; importing it loads
    neither torch nor transformers (snakemake plans on the light install too)."""
    sources = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    imported = {
        match.group(1) + (f".{match.group(2)}" if match.group(2) else "")
        for path in sources
        for match in re.finditer(
            r"^\s*from (olmes[\w.]*) import \(?\s*(workflow\b)?|^\s*import (olmes[\w.]*)",
            path.read_text(encoding="utf-8"),
            re.M,
        )
        if match.group(1)
    }
    assert imported == {"olmes.cli.workflow"}, imported
    code = "import sys, olmes.cli.workflow; print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert loaded.stdout.strip() == "[]"


def code_map() -> str:
    """The README's code map: the stage table and the paragraphs after it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme[readme.index("| stage | code") : readme.index("### Running the workflow")]


def test_the_readme_code_map_names_every_module():

    text = code_map()
    commands = REPO / "olmes" / "cli" / "commands"
    missing = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "olmes").rglob("*.py"))
        if path.name != "__init__.py"
        and path.parent != commands  # one module per command: docs/commands.md has each
        and not re.search(rf"[`/]{re.escape(path.name)}`", text)
    ]
    assert not missing, f"README's code map does not name {missing}"


def test_docs_commands_names_every_command():
    text = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    for path in sorted((REPO / "olmes" / "cli" / "commands").glob("*.py")):
        if path.name == "__init__.py":
            continue
        name = re.search(r'^NAME = "([\w-]+)"', path.read_text(encoding="utf-8"), re.M).group(1)
        assert f"`olmes {name}" in text, f"docs/commands.md does not describe olmes {name} ({path.name})"
