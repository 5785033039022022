"""kiln's functions with real signatures and docstrings, made from the settings the C++ core declares: the same
names, defaults and ranges as the command line's --flags (`kiln render --help`)."""
import functools
import inspect

from . import _kiln

_KW = inspect.Parameter.KEYWORD_ONLY
_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _setting_line(spec):
    default = spec["default_text"] or repr(spec["default"])
    extra = []
    if spec["choices"]:
        extra.append("one of " + ", ".join(spec["choices"]))
    low, high = spec["min"], spec["max"]
    if low is not None and high is not None:
        extra.append(f"{low:g} to {high:g}")
    elif low is not None:
        extra.append(f">= {low:g}")
    elif high is not None:
        extra.append(f"<= {high:g}")
    if spec["env"]:
        extra.append("environment " + spec["env"])
    tail = f" ({'; '.join(extra)})" if extra else ""
    if spec["required"]:
        return f"    {spec['name']}: {spec['help']}{tail}; required"
    return f"    {spec['name']}: {spec['help']}{tail}; default {default}"


def declared(function, name, positional=(), explicit=()):
    """`function` (an extension function taking `positional` inputs, `explicit` keywords and **settings) with the
    signature and docstring of the settings kiln declares for `name`. positional/explicit: names or (name,
    default) pairs."""
    specs = _kiln.params(name)
    parameters = []
    for item in positional:
        pname, default = (item, inspect.Parameter.empty) if isinstance(item, str) else item
        parameters.append(inspect.Parameter(pname, _POS, default=default))
    for pname, default in explicit:
        parameters.append(inspect.Parameter(pname, _KW, default=default))
    for spec in specs:
        default = inspect.Parameter.empty if spec["required"] else spec["default"]
        parameters.append(inspect.Parameter(spec["name"], _KW, default=default))
    signature = inspect.Signature(parameters)

    @functools.wraps(function)
    def call(*args, **kwargs):
        signature.bind(*args, **kwargs)  # TypeError for missing or unknown arguments, like any Python function
        return function(*args, **kwargs)

    text = function.__doc__ or ""
    if "\n\n" in text:  # pybind11 puts the C++ signature on the first line
        text = text.split("\n\n", 1)[1]
    call.__doc__ = text + "\n\nSettings (the same names as the command line's flags):\n" + "\n".join(
        _setting_line(spec) for spec in specs)
    call.__signature__ = signature
    del call.__wrapped__  # help() shows the declared signature, not the extension's **kwargs
    return call
