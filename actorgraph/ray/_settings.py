"""`RayBackend`'s settings, checked when the backend is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actorgraph._model.errors import ConfigError
from actorgraph.ray._placement import check_placement

__all__ = ["Settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """`RayBackend`'s settings (its docstring says what each means)."""

    partitions: int | None
    max_concurrency: int
    num_cpus: int | None
    connect_timeout: float
    large_state: int
    max_state_bytes: int | None
    switch_interval: float | None
    placement: Any

    def check(self) -> None:
        """Refuse a setting out of range.

        Raises:
            ConfigError: naming the setting and what to give.
        """
        for name, value in (("partitions", self.partitions), ("max_concurrency", self.max_concurrency)):
            if value is not None and not (isinstance(value, int) and value >= 1):
                msg = f"RayBackend({name}={value!r}): give an int >= 1"
                raise ConfigError(msg)
        timeout, large = self.connect_timeout, self.large_state
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            msg = f"RayBackend(connect_timeout={timeout!r}): give a positive number of seconds"
            raise ConfigError(msg)
        if not (isinstance(large, int) and large >= 0):
            msg = f"RayBackend(large_state={large!r}): give a number of bytes >= 0"
            raise ConfigError(msg)
        check_placement(self.placement)
