"""Every GPU at a glance (pane 7), the board facts behind it from NVML, the all-GPU view of
panes 1-2, mouse, themes and the extra keys (h, F1, F10)."""

from __future__ import annotations

import pynvml
import pytest
from textual import events

from gputop.session import Session
from gputop.sources.nvml import NvmlSource
from gputop.tui.app import GputopApp
from gputop.tui.panes.gpus import fit_columns
from tests.conftest import sim_frames
from tests.fake_nvml import FakeGpu, FakeNvml, GiB
from tests.test_tui import text_rows


def board(**kw) -> FakeGpu:
    return FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 10 * GiB, util_pct=50,
                   gpm={2: 30.0, 20: 2048.0, 21: 512.0, 60: 0.0, 61: 0.0}, **kw)


def test_board_facts_from_nvml(monkeypatch):
    fake = FakeNvml([board(fan_pct=41, pstate=2, ecc_counts=(3, 1)),
                     board(ecc_counts=None, pending_xids=[79, 48])]).install(monkeypatch)
    source = NvmlSource(clock=lambda: fake.now_us / 1e6)
    source.open()
    first = source.poll()
    fake.advance(1.0)
    second = source.poll()
    a, b = second.gpus
    assert (a.fan_pct, a.pstate, a.power_limit_w) == (41.0, 2, 700.0)
    assert (a.ecc_corrected, a.ecc_uncorrected) == (3, 1)
    assert a.bus_id == "00000000:18:00.0" and a.mig_mode is False
    assert (a.pcie_rx_mib_per_s, a.pcie_tx_mib_per_s) == (512.0, 2048.0)
    assert b.fan_pct is None and b.missing["fan_pct"] == "not supported on this GPU"
    assert b.ecc_uncorrected is None and "ECC is off" in b.missing["ecc_uncorrected"]
    # XID events arrive through the event set, counted since gputop began, newest code kept
    assert first.gpus[1].xid_count == 2 and first.gpus[1].xid_last == 48
    assert b.xid_count == 2 and a.xid_count == 0
    assert "nvmlEventSetWait_v2" in fake.calls  # and the fake asserts each wait was 0 ms
    source.close()
    assert "nvmlEventSetFree" in fake.calls


def test_xid_events_unavailable_are_unknown_not_zero(monkeypatch):
    fake = FakeNvml([board()])
    fake.install(monkeypatch)

    def refuse():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
    monkeypatch.setattr(pynvml, "nvmlEventSetCreate", refuse)
    source = NvmlSource()
    source.open()
    gpu = source.poll().gpus[0]
    assert gpu.xid_count is None and gpu.missing["xid_count"] == "not supported on this GPU"
    source.close()


def test_columns_fit_200_and_80_and_keep_what_matters():
    wide, name, _ = fit_columns(198)
    headers = [c.header for c in wide]
    assert name and {"FAN", "P", "SMCLK", "PCIE rx/tx", "NVLINK rx/tx", "ECC", "XID"} <= set(headers)
    narrow, name, alert_w = fit_columns(78)
    headers = [c.header for c in narrow]
    assert {"UTIL", "SM", "util ░ / SM █", "MEMORY", "POWER/CAP", "TEMP"} <= set(headers)
    assert alert_w >= 20  # "⚠ busy, unproductive" whole


def app8(scenario="allreduce-straggler", seconds=30):
    return GputopApp(Session(f"demo:{scenario}", frames=sim_frames(scenario, seconds, gpus=8)))


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
async def test_overview_shows_every_gpu_and_enter_selects_one(size):
    app = app8()
    async with app.run_test(size=size) as pilot:
        await pilot.press("7")
        await pilot.pause()
        rows = text_rows(app._pane("7"))
        gpu_rows = [r for r in rows if r[1:3].strip().isdigit()]
        assert len(gpu_rows) == 8, rows
        assert all("%" in r and "/80G" in r for r in gpu_rows)
        # the straggler scenario's episode is named on the GPUs it covers
        assert sum("busy" in r or "starved" in r for r in gpu_rows) >= 1, rows
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()
        assert app.gpu_index == 3 and app.zoomed is None and app.current_pane == "1"
        assert "GPU 3 of 8" in text_rows(app.query_one("#status"))[0]


async def test_double_click_on_a_gpu_row_selects_it():
    app = app8()
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("7")
        await pilot.pause()
        await pilot.double_click(app._pane("7"), offset=(5, 7))  # border, header, GPU 0..: GPU 5
        await pilot.pause()
        assert app.gpu_index == 5 and app.zoomed is None
        await pilot.press("7")
        pane = app._pane("7")
        for _ in range(2):  # the wheel moves the cursor down the list
            pane.post_message(events.MouseScrollDown(pane, 5, 5, 0, 1, 0, False, False, False))
        await pilot.press("enter")
        await pilot.pause()
        assert app.gpu_index == 7


async def test_a_shows_every_gpu_in_panes_1_and_2():
    app = app8()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        for key in "12":
            rows = text_rows(app._pane(key))
            assert "every GPU" in rows[0]
            assert [r.split()[0] for r in rows[1:9]] == [str(i) for i in range(8)]
        await pilot.press("a")
        await pilot.pause()
        assert "every GPU" not in text_rows(app._pane("1"))[0]


async def test_mouse_click_focuses_double_click_zooms():
    app = app8()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.click(app._pane("3"), offset=(10, 5))
        await pilot.pause()
        assert app.current_pane == "3" and app.zoomed is None
        await pilot.double_click(app._pane("5"), offset=(10, 5))
        await pilot.pause()
        assert app.zoomed == "5"
        await pilot.double_click(app._pane("5"), offset=(10, 5))
        await pilot.pause()
        assert app.zoomed is None


async def test_theme_key_help_keys_and_f10():
    from gputop.tui import theme

    assert tuple(theme.PALETTES) == theme.THEME_NAMES  # a palette for every configurable name
    app = app8()
    async with app.run_test(size=(160, 45)) as pilot:
        seen = [app.theme_name]
        for _ in range(4):
            await pilot.press("T")
            await pilot.pause()
            seen.append(app.theme_name)
        assert seen == ["dark", "light", "colorblind", "high-contrast", "dark"]
        for key in ("h", "f1", "question_mark"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.get_screen("help")
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("f10")
        await pilot.pause()
    assert app.return_code == 0


def test_the_power_cap_and_ecc_are_read_every_tenth_poll(monkeypatch):
    gpu = board(ecc_counts=(0, 0))
    fake = FakeNvml([gpu]).install(monkeypatch)
    source = NvmlSource()
    source.open()
    readings = []
    for tick in range(12):
        if tick == 3:
            gpu.ecc_counts = (0, 2)  # two uncorrected errors arrive
        readings.append(source.poll().gpus[0].ecc_uncorrected)
    assert readings == [0] * 10 + [2, 2]  # shown from the next slow read, never lost
    assert fake.calls.count("nvmlDeviceGetTotalEccErrors") == 4  # 2 reads x 2 kinds
    source.close()
