// Start the linked notebook's kernel while JupyterLab is still building the page.
//
// JupyterLab starts a notebook's kernel only once the notebook is on screen, 3-5 s after the
// link is opened on a 2-core machine; the kernel then needs another 4-5 s (Pyodide, IPython) in
// its web worker (bench/lite.py --trace). This script asks for the kernel as soon as the app's
// services exist, about 2 s earlier, so that the two run side by side. When the notebook opens,
// JupyterLab finds a session for its path and connects to it instead of starting another.
//
// lite/slim.py copies this file into the site and names it in lab/index.html. It only ever
// starts what the page would start anyway: the default kernel, for a notebook that exists. If
// anything here fails, the notebook starts its own kernel as it always did. What happened is in
// window.emqEarlyKernel: "started", "skipped: ..." or "failed: ...".
(() => {
  const said = (state) => (window.emqEarlyKernel = state);
  const path = new URLSearchParams(window.location.search).get("path");
  if (!path || !path.endsWith(".ipynb")) return said("skipped: the link names no notebook");
  const name = path.split("/").pop(); // the session name JupyterLab gives a document
  const opened = Date.now();

  const waitForApp = setInterval(() => {
    const app = window.jupyterapp; // the page sets it before the app starts (exposeAppInBrowser)
    if (!app) {
      if (Date.now() - opened > 60_000) {
        clearInterval(waitForApp);
        said("failed: no app after 60 s");
      }
      return;
    }
    clearInterval(waitForApp);
    start(app.serviceManager).then(said, (error) => {
      said(`failed: ${error}`);
      console.warn(`emq-lab: the early kernel start for ${path} did not happen (${error}); the notebook starts its own`);
    });
  }, 10);

  async function start(services) {
    await services.ready;
    const [kernel] = await Promise.all([defaultKernel(services), services.contents.get(path, { content: false })]);
    await services.sessions.refreshRunning();
    if ([...services.sessions.running()].some((session) => session.path === path)) {
      return "skipped: the notebook's kernel was already running";
    }
    const session = await services.sessions.startNew({ path, name, type: "notebook", kernel: { name: kernel } });
    // The kernel keeps running; this connection goes, or it would also receive the notebook's
    // widget messages and complain that it has no handler for them.
    session.dispose();
    return "started";
  }

  async function defaultKernel(services) {
    // The kernel's spec is registered by a plugin that activates while the app starts.
    for (let attempt = 0; attempt < 600; attempt++) {
      const specs = services.kernelspecs.specs;
      if (specs && specs.default && specs.kernelspecs[specs.default]) return specs.default;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await services.kernelspecs.refreshSpecs();
    }
    throw new Error("no kernel spec after 30 s");
  }
})();
