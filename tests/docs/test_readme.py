"""The README is the front page: at most 12 KB, with the two set-up commands CI runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
INSTALL_AND_RUN = "pip install -e . && trainbill forecast examples/seed-70b-finetune.toml"


def test_readme_fits_on_a_screen_or_two() -> None:
    assert README.stat().st_size <= 12 * 1024


def test_readme_has_the_two_setup_commands_and_ci_runs_the_second_verbatim() -> None:
    text = README.read_text("utf-8")
    ci = (REPO / ".ci" / "run").read_text("utf-8").splitlines()
    marker = ci.index("# --- the README's test command, verbatim ---")
    test_command = ci[marker + 1].strip()
    assert f"```bash\n{INSTALL_AND_RUN}\n```" in text
    assert f"```bash\n{test_command}\n```" in text


def test_readme_links_point_at_files_that_exist() -> None:
    text = README.read_text("utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local  # the README links into the docs
    missing = [t for t in local if not (REPO / t).exists()]
    assert not missing
