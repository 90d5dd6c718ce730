"""Browser tests of the hosted form (a package: its conftest then shadows no other)."""
