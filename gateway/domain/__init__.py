"""The domain's vocabulary: principals and roles, memory records, errors, instants, the
clock's type. Imports only the standard library."""
