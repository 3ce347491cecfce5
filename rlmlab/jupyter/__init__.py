"""Jupyter integration: the rlmlab kernel spec and the IPython extension."""

from rlmlab.jupyter._kernelspec import KERNEL_NAME, install_kernel, kernel_spec

__all__ = ["KERNEL_NAME", "install_kernel", "kernel_spec"]
