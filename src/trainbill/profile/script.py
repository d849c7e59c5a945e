"""Load a user's step script: a Python file exposing ``make_step()``.

The contract is deliberately small so any training loop can be wrapped in a few lines::

    def make_step():
        model, opt, batch = ...
        def step():
            loss = model(batch).loss
            loss.backward(); opt.step(); opt.zero_grad()
        return step, tokens_per_step                      # or, with what is known:
        # return step, tokens_per_step, {"model_params": 7e9, "seq_len": 4096,
        #                                "precision": "bf16"}
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

from trainbill._record import record
from trainbill.profile._errors import ProfileError

__all__ = ["StepScript", "load_step_script"]

_INFO_KEYS = ("model_params", "seq_len", "precision")


@record
class StepScript:
    """What a step script's ``make_step()`` returned, validated."""

    step_fn: Callable[[], object]
    tokens_per_step: int
    model_params: int | None = None
    seq_len: int | None = None
    precision: str | None = None


def load_step_script(path: Path) -> StepScript:
    """Import ``path`` as a module, call its ``make_step()`` and validate the result.

    Args:
        path: a ``.py`` file defining ``make_step() -> (step_fn, tokens_per_step[, info])``
            where ``info`` is an optional mapping with any of ``model_params``, ``seq_len``
            and ``precision``.

    Returns:
        The validated :class:`StepScript`.

    Raises:
        ProfileError: the file is missing, fails to import, has no ``make_step``, or
            ``make_step`` returns something else; the message names the file.
    """
    from trainbill._io import read_input_bytes

    def error(message: str, source: str) -> ProfileError:
        return ProfileError(f"{source}: {message}")

    source = read_input_bytes(path, kind="script", what="step script", error=error)
    name = f"_trainbill_step_script_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProfileError(f"{path}: cannot be imported as a Python module (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # The bytes the gate read, not a second read of the path (which could be swapped).
        exec(compile(source, str(path.resolve()), "exec"), module.__dict__)  # noqa: S102 - the user's own script
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise ProfileError(_user_error(path, "importing the step script failed:", exc)) from exc
    make_step = getattr(module, "make_step", None)
    if not callable(make_step):
        msg = f"{path}: defines no make_step() function; it must return (step_fn, tokens_per_step)"
        raise ProfileError(msg)
    try:
        result = make_step()
    except (Exception, SystemExit) as exc:
        raise ProfileError(_user_error(path, "make_step() raised", exc)) from exc
    return _validate(path, result)


def _user_error(path: Path, what: str, exc: BaseException) -> str:
    """The user's own error as theirs: one block with their exception and the frames in their
    script (trainbill's own frames are noise to them), never a trainbill traceback."""
    mine = str(path.resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == mine]
    where = "".join(
        f"\n  {path}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-5:]
    )
    if isinstance(exc, SystemExit):  # sys.exit(7): Typer would exit 7 with no word at all
        return f"{path}: {what} sys.exit({exc.code!r}); a step script must return, not exit{where}"
    return f"{path}: {what} {type(exc).__name__}: {exc}{where}"


def _guarded(path: Path, step_fn: Callable[[], object]) -> Callable[[], object]:
    """``step_fn`` whose exceptions become a ``ProfileError`` naming the script: the step runs
    inside trainbill's timing loop, where a bare exception would read as a trainbill crash."""

    def step() -> object:
        try:
            return step_fn()
        except (Exception, SystemExit) as exc:
            raise ProfileError(_user_error(path, "the step function raised", exc)) from exc

    return step


def _validate(path: Path, result: object) -> StepScript:
    """Check ``make_step()``'s return value field by field."""
    shape = "(step_fn, tokens_per_step) or (step_fn, tokens_per_step, info)"
    if not isinstance(result, tuple) or len(result) not in {2, 3}:
        raise ProfileError(f"{path}: make_step() must return {shape}, got {type(result).__name__}")
    step_fn, tokens = result[0], result[1]
    info: object = result[2] if len(result) == 3 else {}
    if not callable(step_fn):
        raise ProfileError(f"{path}: make_step()[0] (step_fn) must be callable")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        msg = f"{path}: make_step()[1] (tokens_per_step) must be an integer >= 1, got {tokens!r}"
        raise ProfileError(msg)
    if not isinstance(info, Mapping):
        raise ProfileError(f"{path}: make_step()[2] (info) must be a mapping (dict)")
    unknown = sorted(set(map(str, info)) - set(_INFO_KEYS))
    if unknown:
        allowed = ", ".join(_INFO_KEYS)
        msg = f"{path}: make_step()[2] (info) has unknown keys {unknown}; allowed: {allowed}"
        raise ProfileError(msg)
    return StepScript(
        step_fn=_guarded(path, step_fn),
        tokens_per_step=tokens,
        model_params=_positive_int(path, "model_params", info.get("model_params")),
        seq_len=_positive_int(path, "seq_len", info.get("seq_len")),
        precision=_optional_str(path, "precision", info.get("precision")),
    )


def _positive_int(path: Path, key: str, value: object) -> int | None:
    """Accept ``None``, an int, or a whole float such as ``7e9``; refuse anything else."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProfileError(f"{path}: info[{key!r}] must be a positive integer, got {value!r}")
    return value


def _optional_str(path: Path, key: str, value: object) -> str | None:
    """Accept ``None`` or a string."""
    if value is None or isinstance(value, str):
        return value
    raise ProfileError(f"{path}: info[{key!r}] must be a string, got {value!r}")
