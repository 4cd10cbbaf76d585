"""Capability profiles (YAML, validated with pydantic). Shipped ones live in this folder."""

from .model import Profile, builtin_profiles, dump_profile, load_profile

__all__ = ["Profile", "builtin_profiles", "dump_profile", "load_profile"]
