"""Red-team cases for the nvidia_smi and dcgm sources: public outputs they misread before."""

import polars as pl

import rca

_GPUSTAT_ROWS = (
    "0, GPU-004f693d-767b-b215-b4a9-a18af0ffd643, GeForce GTX TITAN X, 25, 0, 802, 12206\n"
    "1, GPU-86fe97db-bf54-a056-4e8d-9b07e1a298e7, GeForce GTX TITAN X, 54, 86, 10032, 12206\n"
)

_DCGM2_NVLINK_WARNING = """\
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 3GPU 3's NvLink link 0 is currently down   |
|                           | Run a field diagnostic on the GPU.             |
"""


def test_gpustat_noheader_rows_are_gpu_samples_with_index_memory_and_utilization() -> None:
    events = rca.parse_text(_GPUSTAT_ROWS, file="gpustat.csv").sort("line")
    assert events["source"].to_list() == ["nvidia_smi", "nvidia_smi"]
    assert events["kind"].to_list() == ["gpu_sample", "gpu_sample"]
    assert events["gpu_index"].to_list() == [0, 1]
    assert events["gpu_uuid"][1] == "GPU-86fe97db-bf54-a056-4e8d-9b07e1a298e7"
    assert events["gpu_util_pct"].to_list() == [0.0, 86.0]
    assert events["mem_used_bytes"].to_list() == [802 * 2**20, 10032 * 2**20]
    assert events["mem_total_bytes"].to_list() == [12206 * 2**20] * 2


def test_a_row_of_another_order_with_a_uuid_stays_a_log_line() -> None:
    # Same cells, name before uuid: no layout fits, so nothing is guessed from the bare numbers.
    row = "0, GeForce GTX TITAN X, GPU-004f693d-767b-b215-b4a9-a18af0ffd643, 25, 0, 802, 12206\n"
    events = rca.parse_text(row, file="other.csv")
    assert events["kind"].to_list() == ["log"]
    assert events["gpu_uuid"].to_list() == ["GPU-004f693d-767b-b215-b4a9-a18af0ffd643"]


def test_dcgm2_doubled_gpu_prefix_names_the_gpu_of_a_warning() -> None:
    events = rca.parse_text(_DCGM2_NVLINK_WARNING, file="diag.txt").sort("line")
    warning = events.filter(pl.col("severity") == "warning")
    assert warning["gpu_index"].to_list() == [3]
    assert warning["n_lines"].to_list() == [2]
    failed = events.filter(pl.col("line") == 2)
    assert failed["severity"].to_list() == ["error"]
    assert failed["gpu_index"].to_list() == [None]


def test_gpu_requires_reset_cells_make_the_sample_an_error() -> None:
    text = "index, temperature.gpu, utilization.gpu [%], memory.used [MiB]\n0, [GPU requires reset], [GPU requires reset], 0 MiB\n"
    events = rca.parse_text(text, file="q.csv")
    assert events["kind"].to_list() == ["gpu_sample"]
    assert events["severity"].to_list() == ["error"]
    assert events["gpu_index"].to_list() == [0]
    assert events["gpu_util_pct"].to_list() == [None]
