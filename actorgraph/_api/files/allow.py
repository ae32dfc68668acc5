"""The modules a graph file may import: all of them, or only those an operator lists (`allow_modules`).

A graph file is code: each `fn:` names a Python callable that is imported and
run. An operator who loads files they did not write lists the modules they
trust; a name outside the list is refused before anything is imported, and so
is a value that leads out of the list once imported (`myapp:os.system`, or
`myapp:Popen` when `myapp` imported `Popen` from `subprocess`).
"""

from __future__ import annotations

import types
from collections.abc import Iterable

from actorgraph._model.errors import ConfigError

__all__ = ["Allowlist", "is_module_name"]

_DEFINED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)


class Allowlist:
    """Which modules may be imported: every module (`None`), or the listed ones and those under them."""

    def __init__(self, modules: Iterable[str] | None) -> None:
        """Check the names (`package` or `package.module`); `None` allows everything.

        Raises:
            ConfigError: `modules` is a string (give a list), or holds a name that is not a module's.
        """
        if isinstance(modules, (str, bytes)):
            msg = (
                f"allow_modules is a list of module names, not one string: write allow_modules=[{modules!r}]"
            )
            raise ConfigError(msg)
        self.modules = None if modules is None else tuple(dict.fromkeys(modules))
        for name in self.modules or ():
            if not (isinstance(name, str) and is_module_name(name)):
                msg = f"allow_modules: {name!r} is not a module name (write package or package.module)"
                raise ConfigError(msg)

    def allows(self, module: str) -> bool:
        """Whether `module` is listed, or is under a listed package (or no list was given)."""
        if self.modules is None:
            return True
        return any(module == name or module.startswith(f"{name}.") for name in self.modules)

    def refusal(self, target: str, module: str, why: str = "") -> str | None:
        """Why `module` may not be imported for `target`, or None when it may."""
        if self.allows(module):
            return None
        listed = ", ".join(self.modules or ()) or "nothing"
        return (
            f"{target!r} {why or 'imports'} module {module!r}, which is not allowed "
            f"(allow_modules: {listed}); add it to allow_modules (--allow-module) only if you trust it"
        )

    def refusal_of_value(self, target: str, value: object) -> str | None:
        """Why a value reached from an allowed module leads out of the list: a module, a function of one."""
        if self.modules is None:
            return None
        if isinstance(value, types.ModuleType):
            return self.refusal(target, value.__name__, "reaches")
        if isinstance(value, _DEFINED):
            defined_in = getattr(value, "__module__", None)
            return self.refusal(target, defined_in or "<unknown>", "is defined in")
        return None


def is_module_name(name: str) -> bool:
    """Whether `name` is a module's absolute dotted name (`package.module`)."""
    return bool(name) and all(part.isidentifier() for part in name.split("."))
