"""Capability profiles (YAML, validated with pydantic). Shipped ones live in this folder."""

from .model import (
    ChipIdentity,
    Profile,
    builtin_profiles,
    chip_identity,
    dump_profile,
    load_profile,
    vendor_messages,
)

__all__ = ["ChipIdentity", "Profile", "chip_identity", "builtin_profiles", "dump_profile", "load_profile",
           "vendor_messages"]
