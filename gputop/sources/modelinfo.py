"""A model's config and weight size from a path, a model directory or the local HF cache.

Nothing is downloaded: a model id is looked up in the Hugging Face cache
(``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``) only.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from gputop.modelconfig import ConfigError
from gputop.safefile import read_regular

MAX_CONFIG_BYTES = 4 * 2**20  # a config.json is a few KB; an index.json a few MB at most
MAX_INDEX_BYTES = 64 * 2**20
# what a Hugging Face model id looks like: "org/name" or "name", nothing that walks a path
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?")


@dataclass(frozen=True)
class ModelInfo:
    name: str
    config: dict
    directory: Path | None
    weights_bytes: int | None
    weights_source: str


def hf_cache_dirs() -> list[Path]:
    roots = []
    if os.environ.get("HF_HUB_CACHE"):
        roots.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        roots.append(Path(os.environ["HF_HOME"]) / "hub")
    roots.append(Path.home() / ".cache" / "huggingface" / "hub")
    return roots


def find_in_cache(model_id: str) -> Path | None:
    """The newest snapshot directory of ``org/name`` that has a config.json."""
    folder = "models--" + model_id.replace("/", "--")
    for root in hf_cache_dirs():
        snapshots = root / folder / "snapshots"
        if snapshots.is_dir():
            candidates = sorted((p for p in snapshots.iterdir() if (p / "config.json").is_file()),
                                key=lambda p: p.stat().st_mtime, reverse=True)
            if candidates:
                return candidates[0]
    return None


def _weights(directory: Path) -> tuple[int | None, str]:
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        try:
            total = json.loads(read_regular(index, MAX_INDEX_BYTES))["metadata"]["total_size"]
            if isinstance(total, (int, float)) and not isinstance(total, bool) \
                    and 0 < total < 2**50:
                return int(total), f"metadata.total_size of {index.name}"
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            pass
    files = list(directory.glob("*.safetensors"))
    if files:
        return sum(f.stat().st_size for f in files), f"size of {len(files)} .safetensors file(s)"
    return None, "no safetensors files next to the config"


def load(path_or_id: str, from_endpoint: bool = False) -> ModelInfo:
    """Raises ConfigError with a one-line reason when nothing usable is found.

    ``from_endpoint``: the name came from an engine's ``model_name`` label, which whoever
    runs the engine chose; it is only looked up as a model id in the local Hugging Face
    cache, never opened as a path (gputop may run as root)."""
    path = Path(path_or_id).expanduser()
    if from_endpoint:
        if not MODEL_ID.fullmatch(path_or_id) or ".." in path_or_id:
            raise ConfigError(f"{path_or_id!r} is not a model id (only ids are looked up in "
                              "the local Hugging Face cache)")
        directory = find_in_cache(path_or_id)
        if directory is None:
            raise ConfigError(f"{path_or_id!r} is not in the local Hugging Face cache")
        config_path = directory / "config.json"
    elif path.is_dir():
        directory, config_path = path, path / "config.json"
    elif path.exists():
        directory, config_path = path.parent, path
    else:
        directory = find_in_cache(path_or_id)
        if directory is None:
            raise ConfigError(f"{path_or_id!r} is not a file, a directory, or a model in the "
                              "local Hugging Face cache")
        config_path = directory / "config.json"
    try:
        config = json.loads(read_regular(config_path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no config.json in {directory}") from None
    except IsADirectoryError:
        raise ConfigError(f"{config_path} is a directory") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{config_path} is not text") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{config_path} is not JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise ConfigError(f"{config_path} is nested too deeply to be a model config") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {config_path}: {exc.strerror or exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{config_path} is not a JSON object")
    weights, source = _weights(directory) if config_path.name == "config.json" else (None, "")
    return ModelInfo(name=path_or_id, config=config, directory=directory, weights_bytes=weights,
                     weights_source=source)
