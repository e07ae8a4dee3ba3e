import { type Exporter, type ExportPart, SpooledExport } from './exporters.js';
import type { IndexRow } from './row.js';

class JsonlExport extends SpooledExport {
  private readonly rows = this.spool();

  visit(row: IndexRow): void {
    this.rows.write(`${JSON.stringify(row)}\n`);
  }

  *document(): Generator<ExportPart> {
    this.warnSkipped();
    yield this.rows;
  }
}

/** The latest row of each key, exactly as index.jsonl spells rows, in the order they were written. */
export const exportJsonl: Exporter = (source) => new JsonlExport(source);
