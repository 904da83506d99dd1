"""Admission: the structural schema, CEL rules and the chain that runs handlers in upstream order."""
