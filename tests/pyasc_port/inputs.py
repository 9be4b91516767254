"""Host data the way pyasc's generalization tests make it, on the CPU: standard-normal floats,
integers in [-100, 99) (torch.randint's high bound is exclusive)."""
import torch

FLOATS = {torch.float16, torch.float32}


def operand(dtype, size) -> torch.Tensor:
    if dtype in FLOATS:
        return torch.randn(size, dtype=dtype)
    return torch.randint(-100, 99, size, dtype=dtype)


def scalar_operand(dtype):
    if dtype in FLOATS:
        return torch.randn((), dtype=dtype).item()
    return torch.randint(-100, 99, (), dtype=dtype).item()
