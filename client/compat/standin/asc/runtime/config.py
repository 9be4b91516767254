"""Stand-in for pyasc's asc.runtime.config: the backend and SOC enums and set_platform, which
tells the ascrun session the target instead of opening a device."""
from enum import Enum

from ascrun.compat.script import MissingName, active, not_in_standin


class Backend(Enum):
    Model = "Model"
    NPU = "NPU"


class Platform(Enum):
    Ascend910B1 = "Ascend910B1"
    Ascend910B2 = "Ascend910B2"
    Ascend910B2C = "Ascend910B2C"
    Ascend910B3 = "Ascend910B3"
    Ascend910B4 = "Ascend910B4"
    Ascend910B4_1 = "Ascend910B4-1"
    Ascend910_9362 = "Ascend910_9362"
    Ascend910_9372 = "Ascend910_9372"
    Ascend910_9381 = "Ascend910_9381"
    Ascend910_9382 = "Ascend910_9382"
    Ascend910_9391 = "Ascend910_9391"
    Ascend910_9392 = "Ascend910_9392"


class KernelType(Enum):
    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX_AIV_HARD_SYNC = 2
    MIX_AIC_HARD_SYNC = 3
    MIX_AIV_1_0 = 4
    MIX_AIC_1_0 = 5
    MIX_AIC_1_1 = 6
    MIX_AIC_1_2 = 7


def set_platform(backend, soc_version=None, device_id=None, check=True):
    backend = Backend(backend)
    active().set_platform(backend, None if soc_version is None else Platform(soc_version), device_id, check)


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.runtime.config.{name}"))
