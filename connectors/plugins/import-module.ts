/**
 * `import()` of a plugin's file URL, kept a real dynamic import in the CommonJS bundle: the bundler turns
 * `import()` into `require()`, which cannot load an ES module plugin on Node 20. Where code runs in a VM
 * context without an import callback (vitest), the plain `import()` there does it.
 */
const nativeImport = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

export async function importModule(specifier: string): Promise<unknown> {
  try {
    return await nativeImport(specifier);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING") throw err;
    return import(specifier);
  }
}
