"""Stand-in for pyasc's asc.language.adv (asc.adv): only its tiling structs, which host code
fills and kernels take as arguments. Matmul, MatmulType, register_matmul and the rest are used
only inside kernel bodies, which the service compiles with the real pyasc."""
from ascrun.compat.script import MissingName, not_in_standin

from .tiling import RmsNormTiling, SoftmaxTiling, TCubeTiling  # noqa: F401


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.adv.{name}"))
