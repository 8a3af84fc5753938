"""The mechanisms a blind corpus (bench/heldout/corpus_af, an enterprise's on-premises GPU
estate) showed the verdict missing, one each, from the physics that makes them: long chats
whose every token is slower while the batch keeps the output; drafts accepted a third less
often with every token slower for it; a serving program gputop does not scrape, whose
busy time follows its users.  And what they must not name."""

from __future__ import annotations

import pytest

from gputop.model.point import ProcRef
from gputop.model.subjects import serves
from tests.diagnosis_frames import Trace, episodes, named, noisy, saw_tooth


def _short_chats(trace: Trace, ticks: int) -> Trace:
    """A vLLM copilot serving 7 chats of 2-3k tokens: KV pool 4%, 23 ms a token."""
    for i in range(ticks):
        trace.tick(util=noisy(89, i, 0.02), sm=60, dram=noisy(50, i, 0.03),
                   tokens=noisy(330, i, 0.04), running=7, kv=0.04, itl=0.023)
    return trace


def _long_chats(kv_late: float, itl_late: float) -> Trace:
    """The copilot's short chats for three minutes, then the compliance chats grow: the
    pool at ``kv_late`` with 11 in flight, each token at ``itl_late`` where it took 23 ms,
    the batch grown by Little's law so tokens/s is kept."""
    trace = _short_chats(Trace(), 180)
    for i in range(240):
        trace.tick(util=noisy(93, i, 0.02), sm=62, dram=noisy(55, i, 0.03),
                   tokens=noisy(320, i, 0.04), running=11, kv=kv_late, itl=itl_late)
    return trace


def test_long_chats_every_token_slower_at_the_same_output_are_the_bandwidth():
    """Contexts 10x longer per sequence, every token 1.55x slower: the output held by a
    larger batch, so neither tokens/s nor a collapse shows, and two minutes later the
    baseline had taken the slow tokens as normal.  The users wait on every token: named."""
    found = episodes(_long_chats(0.7, 0.036).run())
    assert found and found[0].suspects[0][0] == "memory_bandwidth", named(found)


def test_long_chats_with_tokens_as_fast_as_ever_are_not():
    """...but the same contexts with every token 1.15x slower: nothing users feel."""
    found = episodes(_long_chats(0.7, 0.0265).run())
    assert not found, named(found)


def test_more_chats_of_the_usual_length_are_not():
    """...nor 1.55x slower tokens from more chats of the usual length (KV per sequence
    unchanged): a busier service, its batch larger, not longer contexts."""
    found = episodes(_long_chats(0.063, 0.036).run())
    assert "memory_bandwidth" not in [e.suspects[0][0] for e in found if e.suspects], \
        named(found)


def _eagle(accepted_late: float, itl_late: float, tokens_late: float = 1700,
           kv: float = 0.4, **late) -> Trace:
    """SGLang with EAGLE: 75% of 3,000 drafts/s accepted for three minutes, then
    ``accepted_late`` of them after a system-prompt change, every token at ``itl_late``
    (``late``: whatever else changed with it)."""
    trace = Trace(engine="sglang")
    for i in range(180):
        trace.tick(tokens=noisy(2000, i, 0.04), running=20, itl=0.02, drafted=3000,
                   accepted=noisy(2250, i, 0.02), kv=kv)
    for i in range(150):
        trace.tick(tokens=noisy(tokens_late, i, 0.04), running=20, itl=itl_late,
                   drafted=3000, accepted=noisy(3000 * accepted_late, i, 0.02), kv=kv, **late)
    return trace


def test_drafts_accepted_a_third_less_with_every_token_slower_are_named():
    """Acceptance 75% -> 46% (a drop of 39%, under the half the finding needed) with every
    token 1.6x slower: the drafts wasted are what each user waits on."""
    found = episodes(_eagle(0.46, 0.032).run())
    assert found and found[0].suspects[0][0] == "spec_decode_rejected", named(found)


def test_the_same_acceptance_with_tokens_as_fast_is_not():
    """...but the same acceptance with every token 1.1x: nothing users see is worse."""
    found = episodes(_eagle(0.46, 0.022).run())
    assert not found, named(found)


@pytest.mark.parametrize("cmdline", [
    "ollama serve", "/usr/bin/ollama runner --model /models/blobs/sha256-1 --port 40123",
    "/usr/lib/ollama/ollama_llama_server --model x.gguf", "trtllm-serve /models/llama",
    "lmdeploy serve api_server internlm/internlm2-chat-7b",
    "text-embeddings-router --model-id BAAI/bge-large-en-v1.5 --port 8080",
    "python -m lmdeploy.serve.openai.api_server internlm/internlm2-chat-7b",
    "python3 -m tensorrt_llm.commands.serve /models/llama",
    # named for serving, or run by an HTTP front: the program itself says so
    "python3 serve_sdxl.py --ckpt sdxl.safetensors", "python3 -m embed_server --model e5-large",
    "python -u /srv/app/rerank_server.py", "/opt/detector/bin/infer_server --engine yolo.plan",
    "python3 -m ctr.serve", "infinity_emb v2 --model-id BAAI/bge-small-en-v1.5",
    "uvicorn app:app --workers 1", "gunicorn: worker [app:app]",
    # the processes that hold the GPU under TorchServe, BentoML 1.2+ and Ray Serve
    "/usr/bin/python3 /opt/ts/model_service_worker.py --sock-type unix --sock-name /tmp/.ts.9000",
    "python3 -m _bentoml_impl.worker.service --fd 3 --worker-id 1",
    "ray::ServeReplica:default:LLMServer", "python -m streamlit run app.py",
    # told where to listen: ComfyUI, an app with a port, Gradio's server port
    "python main.py --listen 0.0.0.0", "/opt/featsvc/bin/featsvc --port 9000",
    "python app.py --server_port 7860"])
def test_serving_programs_gputop_does_not_scrape_are_known_by_their_command(cmdline):
    assert serves(_proc(cmdline))


@pytest.mark.parametrize("cmdline", [
    "python train.py --serve-dir /data", "ollama pull x", "python -m torch.distributed.run train.py",
    "python train.py --output_dir /ckpt/trtllm-serve-bench",
    "python finetune.py --data /data/text-embeddings-router-logs/train.jsonl",
    "python quantize.py --save /models/ollama_llama_server.gguf", "trtllm-build --checkpoint x",
    # a word that only contains "serve", a path among the arguments, code given with -c, a
    # rendezvous port beside a rank argument
    "python observe.py", "python reserve_gpus.py", "python train.py --config conf/server.yaml",
    "python -c 'import serve; serve.main()'",
    "python train.py --local-rank=0 --port 29500 --nproc 8",
    # a training script's viewer or rendezvous port (3D Gaussian Splatting, a Slurm script),
    # a debugger running a training script, a test of a server
    "python train.py -s data/garden -m out/garden --port 6011",
    "python -u slurm_train.py --port=29499 --epoch=200",
    "/usr/bin/python3 /opt/pycharm/plugins/python/helpers/pydev/pydevd.py --multiprocess "
    "--client 127.0.0.1 --port 35871 --file /home/u/train.py",
    "python -m debugpy --listen 0.0.0.0:5678 --wait-for-client train.py",
    "python tests/test_server.py"])
def test_other_programs_are_not_servers(cmdline):
    assert not serves(_proc(cmdline))


def _proc(cmdline: str) -> ProcRef:
    return ProcRef(pid=1, ppid=1, sm_util_pct=None, mem_bytes=None,
                   name=cmdline.split()[0].rsplit("/", 1)[-1], cmdline=cmdline)


def _bursts(cmdline: str) -> Trace:
    """A GPU process with no metrics page whose GPU-Util saw-tooths (a training script's
    loader falling behind; a server's users' requests coming and going)."""
    return saw_tooth(Trace(engine=None, procs=[(7001, 1, 0, cmdline)]))


@pytest.mark.parametrize("cmdline", [
    "ollama serve", "python main.py --listen 0.0.0.0 --port 8188",
    "python3 -m embed_server --model e5-large", "infinity_emb v2 --model-id BAAI/bge-m3"])
def test_a_server_without_a_page_following_its_users_is_no_input_stall(cmdline):
    """Ollama serves no /metrics, nor do ComfyUI or an embedding service: their saw-tooth is
    their users' requests, not a data loader's waits; each is known as a server by its
    command, as vLLM's and llama-server's are."""
    found = episodes(_bursts(cmdline).run())
    assert not found, named(found)


@pytest.mark.parametrize("cmdline", [
    "python train_resnet.py", "python train.py -s data/garden -m out/garden --port 6011"])
def test_the_same_saw_tooth_from_a_training_script_is_still_judged(cmdline):
    """...while a training script with the same saw-tooth is a job whose steps wait (the
    control: the detector does see the pattern), a viewer's port among its arguments or
    not (3D Gaussian Splatting's train.py takes one)."""
    found = episodes(_bursts(cmdline).run())
    assert found and found[0].suspects[0][0] == "input_stall", named(found)


def _tgi(prefill_late: float) -> Trace:
    """TGI for a legacy RAG app: its forward passes spend 0.05 s a second on prefill batches
    and 0.75 s on decode ones; then ``prefill_late`` s a second on prefill (users attach
    long documents), the decode ones left the rest, tokens/s 0.7x, requests queueing."""
    trace = Trace(engine="tgi")
    for i in range(120):
        tokens = noisy(600, i, 0.05)
        trace.tick(util=noisy(85, i, 0.03), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(2400, i, 0.1), running=8, decode_s=0.75, prefill_s=0.05)
    for i in range(120):
        tokens = noisy(600 * (0.7 if prefill_late > 0.1 else 1.0), i, 0.05)
        trace.tick(util=noisy(96, i, 0.02), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(2400 if prefill_late <= 0.1 else 5200, i, 0.1), running=8,
                   waiting=min(10, i // 6) if prefill_late > 0.1 else 0,
                   decode_s=0.9 - prefill_late, prefill_s=prefill_late)
    return trace


def test_tgis_prefill_batches_taking_its_time_are_prefill_interference():
    """Prefill batches go from 6% of TGI's forward time to 45%: the decodes wait behind
    them (TGI's page has no per-token latency to show it; its forward seconds by method
    do)."""
    found = episodes(_tgi(0.4).run())
    assert found and found[0].suspects[0][0] == "prefill_interference", named(found)
    assert any("prompts take" in e for e in found[0].evidence), found[0].evidence


def test_tgi_at_its_usual_prefill_share_is_not():
    found = episodes(_tgi(0.05).run())
    assert not found, named(found)


def test_a_pool_refilling_after_a_restart_to_its_old_normal_is_not_the_bandwidth():
    """A copilot served 11 long chats (KV pool 60%, 34 ms a token) for five minutes, then
    restarted: its first minutes of short chats (4%, 23 ms) are the new baseline, and the
    pool refills to where it was.  Contexts no longer than the run before served is no
    onset: the run before is the normal its contexts are judged by, for a while."""
    trace = Trace()
    for i in range(300):
        trace.tick(util=noisy(93, i, 0.02), sm=62, dram=noisy(55, i, 0.03),
                   tokens=noisy(320, i, 0.04), running=11, kv=0.6, itl=0.034)
    for _ in range(5):
        trace.tick(util=0, sm=0, dram=0, engine_up=False)
    trace.restart_counters()
    _short_chats(trace, 150)
    for i in range(300):
        ramp_share = min(1.0, i / 150)
        trace.tick(util=noisy(93, i, 0.02), sm=62, dram=noisy(55, i, 0.03),
                   tokens=noisy(330 - 10 * ramp_share, i, 0.04), running=7 + 4 * ramp_share,
                   kv=0.04 + 0.56 * ramp_share, itl=0.023 + 0.011 * ramp_share)
    found = episodes(trace.run())
    assert "memory_bandwidth" not in [e.suspects[0][0] for e in found if e.suspects], \
        named(found)
    assert not [e for e in found if e.measure == "reads"], named(found)


def test_drafts_accepted_less_on_a_power_capped_board_are_the_clock():
    """Acceptance 75% -> 47% with every token 1.5x slower, but the board's clock cut to
    1,300 MHz under the power cap at the same time: the cut clock explains the slower
    tokens, and the episode opens on it, not on the drafts."""
    trace = _eagle(0.47, 0.03, tokens_late=1500, kv=0.2, clock=1300, power=450,
                   throttle=("power cap",))
    found = episodes(trace.run())
    assert found and found[0].measure != "spec", [(e.measure, e.suspects) for e in found]
    assert found[0].suspects[0][0] == "throttling", named(found)
