"""Build hook: ship perturbation_bench_autoload.pth at the top of site-packages.

Everything else about the package is declared in setup.cfg. The .pth file is what lets a plain
``lm_eval --tasks perturbation_syn_human`` find the tasks (see perturbation_bench/_autoload.py);
setuptools has no declarative way to place a file outside a package, hence this override.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "perturbation_bench_autoload.pth"


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / PTH
        self.copy_file(str(Path(__file__).parent / PTH), str(target), preserve_mode=0)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


setup(cmdclass={"build_py": BuildPyWithPth})
