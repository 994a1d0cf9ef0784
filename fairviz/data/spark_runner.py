"""The Spark side of ``Engine``: the session (classic or Spark Connect) and how each source becomes a DataFrame it
reads (CSV with the sniffed dialect, Parquet, tables, queries), by column position."""
from __future__ import annotations

import dataclasses
import os
import warnings

from fairviz.data.duckdb_runner import _header_names, _sniffed
from fairviz.data.model import DataError
from fairviz.data.preview import (
    first_line,
)
from fairviz.data.sources import (
    Files,
    Frame,
    Location,
    Query,
    Table,
)
from fairviz.data.spark_session import (
    SPARK_SQL_CONF,
    check_master,
    check_reachable,
    connect_client_missing,
    quiet_pyspark_loggers,
)

DEFAULT_SPARK_MASTER = "local[2]"


class SparkRunner:
    """Mixed into ``fairviz.data.engine.Engine``: its methods read the engine's state (``kind``, ``master``, the
    connection, the registered columns)."""

    def spark(self):
        if self._spark is None:
            try:
                from pyspark.sql import SparkSession
            except ImportError:
                raise DataError("--engine spark needs pyspark (pip install pyspark==4.3.0) and Java 17.") from None
            quiet_pyspark_loggers()
            if self.connect:
                self._spark = self._spark_connect(SparkSession)
            else:
                self._spark = self._spark_classic(SparkSession)
        return self._spark

    def _spark_connect(self, SparkSession):
        missing = connect_client_missing()
        if missing:
            raise DataError(f"Spark Connect (sc://) needs the Connect client's packages: pip install "
                            f"'pyspark[connect]==4.3.0' ({', '.join(missing)} missing).")
        check_reachable(self.master)
        try:
            with warnings.catch_warnings():      # pyspark's nag about pandas 3 would break the CLI's one-line errors
                warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
                spark = SparkSession.builder.remote(self.master).getOrCreate()
            for key, value in SPARK_SQL_CONF.items():
                spark.conf.set(key, value)
        except Exception as err:
            raise DataError(f"Could not reach the Spark Connect server at {self.master}: {first_line(err)}") from None
        return spark

    def _spark_classic(self, SparkSession):
        import shutil
        if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
            raise DataError("--engine spark needs Java (Debian: apt-get install openjdk-17-jre-headless).")
        master = self.master or DEFAULT_SPARK_MASTER
        check_master(master)
        running = SparkSession._instantiatedSession
        if running is not None and running.sparkContext.master != master:
            running.stop()                                   # getOrCreate would silently keep the other master
        # a Spark Connect session earlier in this process leaves pyspark in "connect mode" (an environment flag and
        # the shared builder's spark.remote); a classic session needs both cleared
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
        builder = SparkSession.Builder().master(master).appName("fairviz")
        for key, value in {**SPARK_SQL_CONF, "spark.sql.execution.arrow.pyspark.enabled": "true",
                           "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}.items():
            builder = builder.config(key, value)
        try:
            spark = builder.getOrCreate()
        except Exception as err:
            raise DataError(f"Could not start Spark on {master}: {first_line(err)}") from None
        spark.sparkContext.setLogLevel("ERROR")
        return spark

    def _spark_frame(self, source, text: tuple[str, ...] = ()):
        """The source as a Spark DataFrame whose columns are c0, c1, … (``self._names`` keeps the source's)."""
        if isinstance(source, Frame) and source.is_spark:
            return self._spark_positional(source.data)
        spark = self.spark()
        if isinstance(source, (Files, Location)):
            paths = list(source.files) if isinstance(source, Files) else [source.url]
            if source.format == "parquet":
                return self._spark_positional(self._spark_read(lambda: spark.read.parquet(*paths)))
            sniffed = _sniffed(source)
            if sniffed is not None and sniffed.encoding == "cp1252":      # Spark knows no Windows-1252 either
                paths = self._as_utf8(paths, sniffed.encoding)
                sniffed = dataclasses.replace(sniffed, encoding="utf-8")
            return self._spark_csv(spark, paths, sniffed, text)
        if isinstance(source, Table):
            return self._spark_positional(self._spark_read(lambda: spark.sql(f"SELECT * FROM {source.table}")))
        if isinstance(source, Query):
            return self._spark_positional(self._spark_read(lambda: spark.sql(f"SELECT * FROM ({source.text}) q")))
        data = source.data if isinstance(source, Frame) else source
        return self._spark_positional(spark.createDataFrame(data.to_pandas()))

    def _spark_positional(self, frame):
        schema = self._spark_read(lambda: frame.schema)
        self._set_columns([f.name for f in schema.fields], [f.dataType.simpleString() for f in schema.fields])
        return frame.toDF(*self._aliases())

    def _spark_csv(self, spark, paths, sniffed, text):
        """A CSV read as DuckDB reads it: the sniffed encoding and delimiter, the inferred types applied by position
        (the header is skipped, never parsed into SQL), group columns as text, decimal commas as numbers."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType
        options = {"header": True, "mode": "PERMISSIVE", "escape": '"'}   # RFC 4180: a quote inside quotes is ""
        if sniffed is not None:
            options.update(sep=sniffed.delimiter, encoding=sniffed.spark_encoding)
            if sniffed.encoding == "utf-16":
                options["multiLine"] = True
        inferred = self._spark_read(lambda: spark.read.options(**options, inferSchema=True).csv(paths).schema)
        self._set_columns(_header_names(sniffed.names if sniffed else None, [f.name for f in inferred.fields]), [])
        wanted = self._text_aliases(text)
        decimal = {f"c{k}" for k in (sniffed.decimal_columns if sniffed is not None else ())}
        fields = [StructField(alias, StringType() if alias in wanted or alias in decimal else f.dataType)
                  for alias, f in zip(self._aliases(), inferred.fields)]
        frame = self._spark_read(lambda: spark.read.options(**options, enforceSchema=True)
                                 .schema(StructType(fields)).csv(paths))
        for alias in decimal - wanted:
            frame = frame.withColumn(alias, F.regexp_replace(F.col(alias), ",", ".").cast("double"))
        self._types = [f.dataType.simpleString().upper() for f in self._spark_read(lambda: frame.schema).fields]
        return frame

    def _spark_read(self, read):
        try:
            return read()
        except Exception as err:
            raise self._read_error(err) from None
