"""Step scripts: make_step() is found, called and its result validated with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainbill.profile import ProfileError, load_step_script


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "my_step.py"
    path.write_text(body, encoding="utf-8")
    return path


def test_two_tuple_script_is_loaded(tmp_path: Path) -> None:
    """(step_fn, tokens) is enough; the optional info fields stay None."""
    path = _script(tmp_path, "def make_step():\n    return (lambda: None), 128\n")
    loaded = load_step_script(path)
    assert loaded.tokens_per_step == 128
    assert loaded.step_fn() is None
    assert (loaded.model_params, loaded.seq_len, loaded.precision) == (None, None, None)


def test_info_mapping_is_read(tmp_path: Path) -> None:
    """A third element carries model size (7e9 accepted as an int), seq_len and precision."""
    body = (
        "def make_step():\n"
        "    info = {'model_params': 7e9, 'seq_len': 4096, 'precision': 'bf16'}\n"
        "    return (lambda: None), 4096, info\n"
    )
    loaded = load_step_script(_script(tmp_path, body))
    assert (loaded.model_params, loaded.seq_len, loaded.precision) == (7_000_000_000, 4096, "bf16")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x = 1\n", "defines no make_step"),
        ("def make_step():\n    return 1\n", "must return .* got int"),
        ("def make_step():\n    return 1, 2\n", r"make_step\(\)\[0\] \(step_fn\) must be callable"),
        ("def make_step():\n    return print, 0\n", r"tokens_per_step\) must be an integer >= 1"),
        ("def make_step():\n    return print, 1, {'seq': 1}\n", r"unknown keys \['seq'\]"),
        ("def make_step():\n    return print, 1, {'seq_len': -3}\n", "seq_len.* positive integer"),
        ("import no_such_module_xyz\n", "importing the step script failed: ModuleNotFoundError"),
        ("def make_step():\n    raise RuntimeError('boom')\n", r"make_step\(\) raised .*boom"),
    ],
)
def test_bad_scripts_are_refused_naming_the_file(tmp_path: Path, body: str, message: str) -> None:
    """Each broken script gives a ProfileError that starts with the script's path."""
    path = _script(tmp_path, body)
    with pytest.raises(ProfileError, match=f"^{path}: .*{message}"):
        load_step_script(path)


def test_missing_script(tmp_path: Path) -> None:
    """A path that does not exist is reported as such."""
    with pytest.raises(ProfileError, match="step script not found"):
        load_step_script(tmp_path / "absent.py")


def test_a_step_that_raises_is_the_users_error(tmp_path: Path) -> None:
    """The step raising inside trainbill's timing loop reads as the script's error, with its
    line."""
    script = tmp_path / "bad.py"
    script.write_text(
        "def make_step():\n"
        "    def step():\n"
        "        raise ValueError('shape mismatch')\n"
        "    return step, 1024\n",
        encoding="utf-8",
    )
    loaded = load_step_script(script)
    with pytest.raises(ProfileError) as info:
        loaded.step_fn()
    text = str(info.value)
    assert text.startswith(f"{script}: the step function raised ValueError: shape mismatch")
    assert f"{script}:3 in step: raise ValueError('shape mismatch')" in text
