"""Stand-in for pyasc's asc.language.core.struct on the host: Struct classes with Field and
StructField members, instances holding their values in a ctypes.Structure as pyasc's do (same
defaults, the same errors for unknown or missing fields, the same ctypes conversions), so that
scripts build Struct kernel arguments unchanged. Inside kernels they mean what the service's
pyasc makes of them."""
import ctypes

from ascrun.compiler.structs import FIELD_CTYPES  # pyasc's dtype_ctype
from ascrun.compat.script import MissingName, not_in_standin

missing = object()


class BaseField:
    def __init__(self, default=missing, name=None):
        self.default = default
        self.name = name


class Field(BaseField):
    def __init__(self, dtype, default=missing, name=None, enum=None):
        super().__init__(default, name)
        self.dtype = dtype
        self.enum_name = enum

    def ctypes_cls(self):
        return FIELD_CTYPES[self.dtype.name]

    def ctypes_value(self, value):
        return value


class StructField(BaseField):
    def __init__(self, struct_cls, default=None, name=None):
        super().__init__(struct_cls() if default is None else default, name)
        self.struct_cls = struct_cls

    def ctypes_cls(self):
        return self.struct_cls.ctypes_class

    def ctypes_value(self, value):
        return value.ctypes_struct


class Struct:
    """Subclass with Field/StructField class attributes; `pack` (default 8) as ctypes' _pack_."""
    __slots__ = ("ctypes_struct",)

    def __init_subclass__(cls, pack=8, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.struct_fields = {name: value for name, value in vars(cls).items() if isinstance(value, BaseField)}
        if not cls.struct_fields:
            raise RuntimeError(f"Struct '{cls.__name__}' must have at least one field")
        fields = [(name, field.ctypes_cls()) for name, field in cls.struct_fields.items()]
        cls.ctypes_class = type(f"_ctypes_{cls.__name__}", (ctypes.Structure,), {"_fields_": fields, "_pack_": pack})

    def __init__(self, **fields):
        for name in fields:
            if name not in self.struct_fields:
                raise RuntimeError(f"{self.__class__.__name__} does not have a field '{name}'")
        values = {}
        for name, field in self.struct_fields.items():
            if name in fields:
                values[name] = fields[name]
            elif field.default is missing:
                raise RuntimeError(f"{self.__class__.__name__} does not have a default value for '{name}'")
            else:
                values[name] = field.default
        object.__setattr__(self, "ctypes_struct", self.ctypes_class(
            **{name: self.get_field(name).ctypes_value(value) for name, value in values.items()}))

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if isinstance(attr, BaseField):
            attr = getattr(self.ctypes_struct, name)
        return attr

    def __setattr__(self, name, value):
        if name in self.struct_fields:
            setattr(self.ctypes_struct, name, self.get_field(name).ctypes_value(value))
        else:
            super().__setattr__(name, value)

    @classmethod
    def get_field(cls, name):
        field = cls.struct_fields.get(name)
        if field is None:
            raise RuntimeError(f"{cls.__name__} does not have a field '{name}'")
        return field

    def pack(self):
        return ctypes.string_at(ctypes.addressof(self.ctypes_struct), ctypes.sizeof(self.ctypes_struct))


def __getattr__(name):
    raise MissingName(not_in_standin(f"asc.language.core.struct.{name}"))
