"""Stand-in for pyasc's asc.lib.host (CANN's Matmul host tiling): ascrun's own, ascrun.compat.host_tiling."""
from ascrun.compat.host_tiling import (  # noqa: F401 - the names pyasc's asc.lib.host exports
    BatchMatmulTiling, CubeFormat, DataType, DequantType, MatmulApiTiling, MatmulConfigParams, MatrixMadType,
    MatrixTraverse, MultiCoreMatmulTiling, PlatformAscendC, PlatformAscendCManager, ScheduleType, TPosition,
    get_ascendc_platform)
from ascrun.compat.script import MissingName, not_in_standin


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.lib.host.{name}"))
