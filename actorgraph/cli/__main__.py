"""`python -m actorgraph.cli`: the same as the `actorgraph` console script."""

import sys

from actorgraph.cli._main import main

sys.exit(main())
