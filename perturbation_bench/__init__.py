"""perturbation-bench for lm-eval: does a DNA language model prefer real coding sequence to a perturbed copy?

Importing this package is cheap on purpose (it runs at every Python start-up through the
autoload hook); the heavy modules (torch, lm-eval, datasets) are imported only by the
submodules that need them.
"""

__version__ = "0.1.0"
