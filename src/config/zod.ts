// zod as hermes uses it: every module that makes a schema imports `z` from here, so that this setting is in
// place before the first schema exists. zod decides at each object schema's making whether it compiles the
// schema to a function at its first parse (and, once, whether the process allows `new Function`): a schema
// made before `z.config` ran would still compile. The config is parsed once per start and tool arguments
// are small, so that compiling only cost start-up time.
import { z } from "zod";

z.config({ jitless: true });

export { z };
