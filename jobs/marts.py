"""spark-submit entry point: the same options as `baccarat marts`.

    spark-submit --master spark://HOST:7077 jobs/marts.py --run-id RUN --out s3://bucket/baccarat
"""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main(["marts", *sys.argv[1:]]))
