"""Host data the way pyasc's generalization tests make it, on the CPU: standard-normal floats,
integers in [-100, 99) (torch.randint's high bound is exclusive); the (dtype, size) cases its
vadd-family files share."""
import pytest
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


VADD_CASES = [
    pytest.param(torch.float32, (1000,)),
    pytest.param(torch.float32, (1,)),
    pytest.param(torch.float32, (9999,)),
    pytest.param(torch.float16, (2048,)),
    pytest.param(torch.int32, (8192,)),
    pytest.param(torch.int16, (8192,)),
    pytest.param(torch.int32, (153, 834)),
]
