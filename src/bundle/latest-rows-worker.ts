// The entry of the thread that reads a bundle's latest index (startReadLatest): bundled on its own beside the
// CLI's bundle, it loads latest-rows.ts, whose worker side runs when the thread's argv names its role.
import './latest-rows.js';
