import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import type { Gate } from "../gate/gate.js";
import type { ModelClient, ToolSpec } from "../model/types.js";
import type { Store } from "../store/store.js";
import type { TokenCalibration } from "./context.js";
import type { Limiter } from "./limiter.js";

/** What driving a run needs: the store, the gate, the limiter and the models, passed in by the runner. */
export interface LoopDeps {
  log?: Logger;
  store: Store;
  gate: Gate;
  limiter: Limiter;
  config: () => Config;
  model: () => ModelClient;
  /** The second model used only for turns that carry an image (`model.vision_model`), when configured. */
  visionModel?: () => ModelClient | undefined;
  toolSpecs: () => ToolSpec[];
  calibration: TokenCalibration;
}
