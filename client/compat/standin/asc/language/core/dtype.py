"""Stand-in for pyasc's asc.language.core.dtype: the data types by name (Struct fields name them;
kernels are compiled by the service's pyasc)."""
from ascrun.compat.script import MissingName, not_in_standin


class DataType:
    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, DataType) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    __repr__ = __str__


class KnownTypes:
    void = DataType("void")
    int1 = DataType("int1")
    int8 = DataType("int8")
    int16 = DataType("int16")
    int32 = DataType("int32")
    int64 = DataType("int64")
    float16 = DataType("float16")
    float32 = DataType("float32")
    float64 = DataType("float64")
    uint8 = DataType("uint8")
    uint16 = DataType("uint16")
    uint32 = DataType("uint32")
    uint64 = DataType("uint64")
    bit = int1
    bool_ = int8  # pyasc's bool is int8
    int_ = int32
    half = float16
    float_ = float32
    double = float64


# pyasc names every type at module level too (asc.language.core.dtype.float32)
globals().update({name: value for name, value in vars(KnownTypes).items() if isinstance(value, DataType)})


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.language.core.dtype.{name}"))
