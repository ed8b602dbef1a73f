"""Build hook: ship perturbation_bench_autoload.pth at the top of site-packages.

Everything else about the package is declared in setup.cfg. The .pth file is what lets a plain
``lm_eval --tasks perturbation_syn_human`` and ``--model dna-hf`` work without ``--include_path``
(see perturbation_bench/_autoload.py). setuptools has no declarative way to place a file outside
a package, hence two small overrides:

- ``build_py`` (regular installs and wheels) copies it next to the package in ``build_lib``;
- ``editable_wheel`` (``pip install -e .``) writes it into the root of the editable wheel, which
  pip installs into site-packages like any root file. This uses setuptools' internal
  ``_run_build_commands`` step; where a future setuptools lacks it, an editable install simply
  comes without the hook (use ``--include_path``), as the README says.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = Path(__file__).parent / "perturbation_bench_autoload.pth"


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file(str(PTH), str(Path(self.build_lib) / PTH.name), preserve_mode=0)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH.name)]


class EditableWheelWithPth(editable_wheel):
    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):
        outputs = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        shutil.copyfile(PTH, Path(unpacked_wheel) / PTH.name)
        return outputs


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
