"""CAPE across real sites on Flower (issue #37; docs/federated.md).

``dpcore`` stays free of Flower: this package moves its protocol steps between processes.
:mod:`federated.protocol` and :mod:`federated.sealing` need only numpy and ``cryptography``;
:mod:`federated.flower_app` and :mod:`federated.launcher` need ``flwr`` (the ``federated``
extra).
"""
