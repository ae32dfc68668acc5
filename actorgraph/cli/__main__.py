"""`python -m actorgraph.cli`: the same as the `actorgraph` console script."""

import sys

from actorgraph.cli import main

sys.exit(main())
