"""python3 -m ci.gpu PHASE [SECONDS]: what ci/gpu-check runs."""
import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
