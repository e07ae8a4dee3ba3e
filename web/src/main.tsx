import { render } from 'preact';
import { CasePage } from './case-page.js';
import { ComparePage } from './compare-page.js';
import { useLocation } from './router.js';
import { RunPage } from './run-page.js';
import { RunsPage } from './runs-page.js';
import './style.css';
import { TaskPage } from './task-page.js';

const App = () => {
  const { path, query } = useLocation();
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let page = <RunsPage />;
  if (parts[0] === 'runs' && parts[1] && parts[2] === 'cases' && parts[3])
    page = <CasePage group={parts[1]} caseKey={parts[3]} />;
  else if (parts[0] === 'runs' && parts[1]) page = <RunPage key={parts[1]} group={parts[1]} query={query} />;
  else if (parts[0] === 'compare') page = <ComparePage query={query} />;
  else if (parts[0] === 'tasks' && parts[1]) page = <TaskPage runId={parts[1]} />;
  return (
    <>
      <header class="top">
        <a class="brand" href="/">
          proctor
        </a>
        <nav>
          <a href="/">Runs</a>
          <a href="/compare">Compare</a>
        </nav>
      </header>
      <main>{page}</main>
    </>
  );
};

render(<App />, document.getElementById('app') as HTMLElement);
