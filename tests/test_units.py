import pytest

from gputop.units import command_line, shorten, size_text


@pytest.mark.parametrize("value, text", [
    (None, "n/a"), (512, "512 B"), (1536, "1.50 KiB"), (131072, "128 KiB"),
    (4_984_256, "4.75 MiB"), (16_060_522_496, "14.96 GiB"), (80 * 2**30, "80 GiB")])
def test_size_text(value, text):
    assert size_text(value) == text


def test_renamed_processes_lose_their_padding():
    assert command_line(["VLLM::EngineCore" + " " * 150]) == "VLLM::EngineCore"
    assert command_line(["VLLM::Worker\0\0\0", "", "  "]) == "VLLM::Worker"
    assert command_line(["python3", "-m", "vllm"]) == "python3 -m vllm"


def test_labels_are_cut_at_a_word():
    text = "vllm serve Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization 0.9 --port 8000"
    cut = shorten(text, 40)
    assert cut == "vllm serve Qwen/Qwen2.5-0.5B-Instruct…" and len(cut) <= 40
    assert shorten("short", 40) == "short"
    assert len(shorten("x" * 100, 10)) == 10
