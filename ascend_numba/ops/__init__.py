"""Public ops: each validates its arguments, asks the host for a plan and launches the kernel."""
