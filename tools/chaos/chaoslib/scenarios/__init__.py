"""Every scenario module; importing this package registers them all.
Add a module here (or a function to one) to add a scenario."""
from . import health, network, processes, storage, clock, configs, credentials, recovery, upgrade, hostile, membership  # noqa: F401
